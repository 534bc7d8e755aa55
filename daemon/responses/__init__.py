"""The answers of each module of daemon/api, as pydantic models (daemon/response_models.py):
``daemon/responses/amp_context.py`` holds those of ``daemon/api/amp_context.py`` (and those
that another module's endpoints answer with too)."""
