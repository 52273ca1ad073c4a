"""The arena's core: frames, live games, the hub, matchmaking, the commit gate and takeovers. No web
stack, no Redis, and no mode named."""
