"""ReproLab: staged reproduction of computational-photonics papers with Meep."""

__version__ = "0.1.0"
