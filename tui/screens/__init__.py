"""Screens of the Textual app."""
