"""Several arena processes as one: Redis pub/sub between them, shared queues and round books, and
taking over the games of a process that died."""
