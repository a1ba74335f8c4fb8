"""An MCP tool result as the model reads it: images a careless tool wrote.

Invariant: an image whose optional (ancillary) PNG chunk has a wrong checksum is read and
attached without that chunk (what is attached is a valid PNG); a wrong checksum on a chunk
the image needs still makes it unreadable; Pillow's process-wide tolerance
(``ImageFile.LOAD_TRUNCATED_IMAGES``) is never changed.
"""

from __future__ import annotations

import base64
import io
import struct
import zlib

import pytest
from PIL import Image, ImageFile

from jupyter_agent.mcp._results import repaired_png, to_output


def png(size: tuple[int, int] = (40, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, "red").save(out, format="PNG")
    return out.getvalue()


def with_chunk(data: bytes, kind: bytes, body: bytes, *, good_crc: bool) -> bytes:
    crc = zlib.crc32(kind + body) ^ (0 if good_crc else 1)
    chunk = struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)
    end_of_ihdr = 8 + 4 + 4 + 13 + 4
    return data[:end_of_ihdr] + chunk + data[end_of_ihdr:]


def result(data: bytes) -> dict[str, object]:
    image = {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": "image/png"}
    return {"content": [image]}


def strictly_readable(data: str) -> bool:
    with Image.open(io.BytesIO(base64.b64decode(data))) as img:
        img.load()
        return img.size == (40, 30)


def test_an_image_with_a_bad_crc_on_an_optional_chunk_is_attached_without_it():
    broken = with_chunk(png(), b"tEXt", b"Comment\x00careless", good_crc=False)
    with pytest.raises(OSError, match="cannot identify image file"):  # Pillow refuses it
        Image.open(io.BytesIO(broken)).load()
    out = to_output("s", "t", result(broken))
    assert out.text == "[image 1 attached]"
    [block] = out.images
    assert strictly_readable(block.source.data)  # the bad chunk is gone, not waved through
    assert ImageFile.LOAD_TRUNCATED_IMAGES is False
    # A large one is downscaled from the mended bytes too.
    big = with_chunk(png((2048, 1536)), b"zTXt", b"k\x00\x00" + zlib.compress(b"x"), good_crc=False)
    [scaled] = to_output("s", "t", result(big)).images
    assert max(Image.open(io.BytesIO(base64.b64decode(scaled.source.data))).size) == 1024


def test_a_bad_crc_on_a_chunk_the_image_needs_leaves_it_unreadable():
    data = bytearray(png())
    data[8 + 4 + 4 + 13] ^= 0xFF  # the header chunk's own checksum
    out = to_output("s", "t", result(bytes(data)))
    assert out.images == []
    assert "unreadable" in out.text
    assert repaired_png(bytes(data)) is None


def test_a_sound_png_and_other_images_are_passed_as_they_are():
    good = png()
    assert repaired_png(good) is None
    assert repaired_png(b"GIF89a not a png") is None
    [block] = to_output("s", "t", result(good)).images
    assert base64.b64decode(block.source.data) == good
    # Truncated chunk lengths do not send the walk past the end.
    assert repaired_png(good[:40] + struct.pack(">I", 2**31) + b"tEXt") is None
