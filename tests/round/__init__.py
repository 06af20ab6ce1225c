"""The game events, actions and their audiences, tested without the websocket stack."""
