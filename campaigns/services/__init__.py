"""Services: the functions that change state (views, admin, API, commands and tasks call them)."""
