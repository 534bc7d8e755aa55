"""Small modal screens: confirm an action, enter a few fields, show a key once."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Grid, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static, TextArea


class Confirm(ModalScreen[bool]):
    """Yes/no for anything that changes or removes something."""

    BINDINGS = [("y", "answer(True)", "Yes"), ("n,escape", "answer(False)", "No")]
    DEFAULT_CSS = """
    Confirm { align: center middle; }
    Confirm > Vertical { width: 70; height: auto; border: thick $warning; padding: 1 2; background: $surface; }
    """

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.question)
            with Grid():
                yield Button("Yes (y)", variant="warning", id="yes")
                yield Button("No (n)", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class Fields(ModalScreen[dict | None]):
    """A few text fields (name: placeholder); Enter on the last one submits."""

    BINDINGS = [("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    Fields { align: center middle; }
    Fields > Vertical { width: 70; height: auto; border: thick $primary; padding: 1 2; background: $surface; }
    """

    def __init__(self, title: str, fields: dict[str, str]) -> None:
        super().__init__()
        self.title_text = title
        self.fields = fields

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            for name, placeholder in self.fields.items():
                yield Input(placeholder=placeholder, id=f"field-{name}")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        values = {name: self.query_one(f"#field-{name}", Input).value.strip() for name in self.fields}
        self.dismiss(values)

    def action_cancel(self) -> None:
        self.dismiss(None)


class MergeEditor(ModalScreen[str | None]):
    """Edit a merge of current and incoming; ctrl+s saves."""

    BINDINGS = [("ctrl+s", "save", "Save merge"), ("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    MergeEditor { align: center middle; }
    MergeEditor > Vertical { width: 90%; height: 80%; border: thick $primary; background: $surface; }
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Edit the merge, then ctrl+s to save (escape cancels)")
            yield TextArea(self.text, id="merge")

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ShowOnce(ModalScreen[None]):
    """A secret shown once (a new agent key)."""

    BINDINGS = [("escape,enter", "close", "Close")]
    DEFAULT_CSS = """
    ShowOnce { align: center middle; }
    ShowOnce > Vertical { width: 80; height: auto; border: thick $success; padding: 1 2; background: $surface; }
    """

    def __init__(self, title: str, secret: str) -> None:
        super().__init__()
        self.title_text = title
        self.secret = secret

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            yield Static(self.secret, id="secret")
            yield Label("Shown once: copy it now into the agent's secret store. Enter closes.")

    def action_close(self) -> None:
        self.dismiss(None)
