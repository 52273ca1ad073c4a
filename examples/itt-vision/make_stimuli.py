"""Writes the stimuli of this example: 12 small PNG images (a field of one colour with a
patch of another), stimuli-colours.csv, stimuli-objects.csv and stimuli-captions.csv for colour
estimation, object detection and captioning. Run from this
folder: python make_stimuli.py"""

import csv
from pathlib import Path

from PIL import Image

HERE = Path(__file__).parent
# (name, background RGB, patch RGB)
IMAGES = [
    ("sky", (70, 110, 220), (245, 245, 245)), ("grass", (50, 150, 60), (240, 230, 40)),
    ("brick", (180, 40, 35), (120, 120, 120)), ("snow", (240, 240, 245), (30, 30, 30)),
    ("night", (20, 20, 30), (240, 230, 60)), ("sand", (230, 200, 80), (60, 110, 210)),
    ("wood", (120, 80, 35), (230, 150, 30)), ("rose", (235, 150, 185), (40, 150, 60)),
    ("plum", (120, 40, 150), (245, 245, 245)), ("fog", (130, 130, 130), (200, 40, 40)),
    ("pumpkin", (235, 135, 25), (40, 130, 50)), ("sea", (30, 70, 190), (250, 250, 250)),
]  # fmt: skip

(HERE / "images").mkdir(exist_ok=True)
for name, back, patch in IMAGES:
    img = Image.new("RGB", (96, 64), back)
    img.paste(Image.new("RGB", (24, 16), patch), (60, 40))
    img.save(HERE / "images" / f"{name}.png")
for task, file in (
    ("color-estimation", "colours"),
    ("object-detection", "objects"),
    ("captioning", "captions"),
):
    with (HERE / f"stimuli-{file}.csv").open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["stimulus_id", "task", "stimulus", "stimulus_file"])
        for name, _, _ in IMAGES:
            out.writerow([name, task, "", f"images/{name}.png"])
