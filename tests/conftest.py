import os

# Any pygame window a test opens goes to SDL's dummy driver: CI has no screen.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
