"""Widgets of the chat screen: prompt, conversation, ledger, gate, memory and actions panels."""
