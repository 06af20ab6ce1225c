""""Play online": the lobby socket, its protocol, the seek pools and the pairing decision."""
