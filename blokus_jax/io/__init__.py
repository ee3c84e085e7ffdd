"""The environment's input and output apart from the game core: records, JSON, SGF, pictures, the viewer, file
safety."""
