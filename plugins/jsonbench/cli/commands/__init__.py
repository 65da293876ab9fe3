"""The functions of the user's commands, one module per kind; each imported only when its command runs."""
