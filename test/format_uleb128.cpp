// ULEB128: minimal encodings round-trip; over-long, overflowing and cut
// encodings are rejected with the offset where the value starts.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "byte_reader.h"
#include "uleb128.h"

using namespace prof;

static std::vector<uint8_t> encode(uint64_t v) {
  uint8_t buf[kUleb128Max];
  return std::vector<uint8_t>(buf, buf + encode_uleb128(v, buf));
}

TEST_CASE("uleb128 edge values have their known encodings") {
  CHECK(encode(0) == std::vector<uint8_t>{0x00});
  CHECK(encode(127) == std::vector<uint8_t>{0x7f});
  CHECK(encode(128) == std::vector<uint8_t>{0x80, 0x01});
  CHECK(encode(624485) == std::vector<uint8_t>{0xe5, 0x8e, 0x26});  // the DWARF spec's example
  std::vector<uint8_t> two63(9, 0x80);
  two63.push_back(0x01);
  CHECK(encode(uint64_t(1) << 63) == two63);
  std::vector<uint8_t> max(9, 0xff);
  max.push_back(0x01);
  CHECK(encode(UINT64_MAX) == max);
}

TEST_CASE("uleb128 round-trips through ByteReader") {
  const uint64_t values[] = {0, 1, 127, 128, 255, 16383, 16384, (uint64_t(1) << 32) - 1,
                             uint64_t(1) << 63, UINT64_MAX};
  std::vector<uint8_t> bytes;
  for (uint64_t v : values) {
    auto e = encode(v);
    bytes.insert(bytes.end(), e.begin(), e.end());
  }
  ByteReader in(bytes.data(), bytes.size());
  for (uint64_t v : values) CHECK(in.uleb() == v);
  CHECK(in.at_end());
}

static FormatError decode_error(std::vector<uint8_t> bytes) {
  ByteReader in(bytes.data(), bytes.size(), 100);
  try {
    in.uleb();
  } catch (const FormatError &e) {
    return e;
  }
  FAIL("decoding succeeded");
  throw;
}

TEST_CASE("uleb128 rejects over-long encodings") {
  auto e = decode_error({0x80, 0x00});
  CHECK_FALSE(e.truncated());
  CHECK(e.offset() == 100);
  CHECK(e.reason() == "over-long ULEB128 encoding");
  CHECK_FALSE(decode_error({0xff, 0x80, 0x00}).truncated());
}

TEST_CASE("uleb128 rejects values beyond 64 bits") {
  std::vector<uint8_t> tenth_too_big(9, 0xff);
  tenth_too_big.push_back(0x02);
  CHECK(decode_error(tenth_too_big).reason() == "ULEB128 value overflows 64 bits");
  std::vector<uint8_t> eleven(10, 0x80);
  eleven.push_back(0x01);
  CHECK(decode_error(eleven).reason() == "ULEB128 value overflows 64 bits");
}

TEST_CASE("uleb128 cut inside a value is reported as truncation") {
  auto e = decode_error({0x80, 0x80});
  CHECK(e.truncated());
  CHECK(e.offset() == 100);
  CHECK(decode_error({}).truncated());
}

TEST_CASE("uleb128 word decoding takes values of up to 8 bytes whatever follows them") {
  // Every length from 1 to 8 bytes, at both ends of its range, followed by
  // bytes with continuation bits that must not be taken.
  for (unsigned bits = 7; bits <= 56; bits += 7) {
    for (uint64_t v : {uint64_t(1) << (bits - 7), (uint64_t(1) << bits) - 1}) {
      std::vector<uint8_t> bytes = encode(v);
      const size_t len = bytes.size();
      bytes.resize(16, 0xff);
      uint64_t got = 0;
      CHECK(decode_uleb128_word(bytes.data(), &got) == len);
      CHECK(got == v);
    }
  }
  // Longer values are left to the byte-by-byte decoder.
  const std::vector<uint8_t> nine = encode(uint64_t(1) << 56);
  uint64_t got = 0;
  CHECK(nine.size() == 9);
  CHECK(decode_uleb128_word(nine.data(), &got) == 0);
  // An over-long encoding is taken as its value.
  const uint8_t over_long[8] = {0x81, 0x80, 0x00, 0, 0, 0, 0, 0};
  CHECK(decode_uleb128_word(over_long, &got) == 3);
  CHECK(got == 1);
}
