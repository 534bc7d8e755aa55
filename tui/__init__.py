"""The Textual TUI. It talks to the daemon over HTTP only (never imports state or daemon)."""
