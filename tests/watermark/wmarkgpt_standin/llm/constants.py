"""The image placeholder: its text and its id in the token sequence."""

IMAGE_TOKEN_INDEX = -200
DEFAULT_IMAGE_TOKEN = "<|image|>"
