"""Environments, wrappers and rendering: the single env (:mod:`.env`), the vector env
(:mod:`.vector`, over ``game.batch``), the PettingZoo AEC and Parallel envs
(:mod:`.pettingzoo`), the wrappers, and the text, picture and ANSI renderings."""
