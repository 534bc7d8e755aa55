from tests.e2e.test_startup_items import *
def test_dbg(daemon, tmp_path):
    repo = make_repo(tmp_path / "repo", USER_FILES["generic"])
    src = Path("startup_items/launcher.py").read_bytes()
    connect(repo, "generic")
    print("after connect same:", (repo/".amp/launcher.py").read_bytes() == src)
    code, again = connect(repo, "generic")
    print("again written", again["written"])
    daemon.stop(); daemon.start()
    code, again = connect(repo, "generic")
    print("after restart written", again["written"])
