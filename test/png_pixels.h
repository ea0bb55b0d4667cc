// Decoding headless Chromium's PNG screenshots (8-bit RGB or RGBA, not
// interlaced) into RGB pixels with zlib, so tests can count colours.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

struct Pixels {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;  // 3 bytes per pixel, rows top down
};

inline uint32_t png_be32(const std::string &s, size_t at) {
  return uint32_t(uint8_t(s[at])) << 24 | uint32_t(uint8_t(s[at + 1])) << 16 |
         uint32_t(uint8_t(s[at + 2])) << 8 | uint32_t(uint8_t(s[at + 3]));
}

// False for anything but an 8-bit RGB(A) PNG that decodes completely.
inline bool decode_png(const std::string &png, Pixels &out) {
  if (png.compare(0, 8, "\x89PNG\r\n\x1a\n", 8) != 0) return false;
  std::string idat;
  int depth = 0, type = 0, interlace = 1;
  for (size_t at = 8; at + 12 <= png.size();) {
    const uint32_t len = png_be32(png, at);
    if (len > png.size() - at - 12) return false;
    const std::string kind = png.substr(at + 4, 4);
    const size_t data = at + 8;
    if (kind == "IHDR" && len >= 13) {
      out.width = png_be32(png, data);
      out.height = png_be32(png, data + 4);
      depth = uint8_t(png[data + 8]);
      type = uint8_t(png[data + 9]);
      interlace = uint8_t(png[data + 12]);
    } else if (kind == "IDAT") {
      idat.append(png, data, len);
    }
    at += 12 + len;
  }
  if (depth != 8 || (type != 2 && type != 6) || interlace != 0) return false;
  const size_t bpp = type == 6 ? 4 : 3, stride = size_t(out.width) * bpp;
  std::vector<uint8_t> raw((stride + 1) * out.height);
  uLongf n = raw.size();
  if (uncompress(raw.data(), &n, reinterpret_cast<const Bytef *>(idat.data()), idat.size()) !=
          Z_OK ||
      n != raw.size())
    return false;
  std::vector<uint8_t> prev(stride, 0), cur(stride);
  for (size_t y = 0; y < out.height; y++) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t *line = &raw[y * (stride + 1) + 1];
    for (size_t i = 0; i < stride; i++) {
      const int a = i >= bpp ? cur[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      int add = 0;
      switch (filter) {
        case 0:
          break;
        case 1:
          add = a;
          break;
        case 2:
          add = b;
          break;
        case 3:
          add = (a + b) / 2;
          break;
        case 4: {  // Paeth
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          add = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default:
          return false;
      }
      cur[i] = uint8_t(line[i] + add);
    }
    for (size_t x = 0; x < out.width; x++)
      out.rgb.insert(out.rgb.end(), &cur[x * bpp], &cur[x * bpp + 3]);
    prev.swap(cur);
  }
  return true;
}
