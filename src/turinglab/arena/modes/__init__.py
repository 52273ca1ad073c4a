"""One module per kind of live game (a kit each): its setup, live game and frames. No web stack, no
Redis."""
