"""Durak Peak: an online multiplayer durak server."""
