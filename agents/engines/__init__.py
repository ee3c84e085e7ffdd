"""Engines that run games between agents: the arena, the GTP engine and client, and the ladder against Pentobi."""
