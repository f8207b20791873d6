// Record encoding: every Change kind survives a round trip, and malformed records are errors.
#include "store/wal/record.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace holdfast::wal {
namespace {

using testing::every_kind_of_change;
using testing::same_change;

TEST(Record, EveryChangeKindRoundTrips) {
  for (const Change& change : every_kind_of_change()) {
    std::string buffer = "prefix";
    const std::size_t size = append_record(buffer, change);
    ASSERT_EQ(buffer.size(), 6 + size);
    std::string_view body = std::string_view(buffer).substr(6);
    Result<RecordView> record = next_record(body);
    ASSERT_TRUE(record.ok()) << record.error().message;
    EXPECT_TRUE(body.empty());
    EXPECT_EQ(record->type, record_type_of(change));
    Result<Change> decoded = decode_record(record->type, record->payload);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    EXPECT_TRUE(same_change(*decoded, change)) << record_type_name(record->type);
  }
}

TEST(Record, SeveralRecordsSplitInOrder) {
  std::string buffer;
  const std::vector<Change> changes = every_kind_of_change();
  for (const Change& change : changes) append_record(buffer, change);
  std::string_view body = buffer;
  for (const Change& change : changes) {
    Result<RecordView> record = next_record(body);
    ASSERT_TRUE(record.ok());
    Result<Change> decoded = decode_record(record->type, record->payload);
    ASSERT_TRUE(decoded.ok());
    EXPECT_TRUE(same_change(*decoded, change));
  }
  EXPECT_TRUE(body.empty());
}

TEST(Record, ShortPayloadIsAnError) {
  std::string buffer;
  append_record(buffer, Granted{testing::make_hold("k", 1)});
  const std::string_view payload = std::string_view(buffer).substr(kRecordHeaderSize);
  for (std::size_t n = 0; n < payload.size(); ++n)
    EXPECT_FALSE(decode_record(RecordType::kGranted, payload.substr(0, n)).ok()) << n;
}

TEST(Record, ExtraBytesAfterTheFieldsAreAnError) {
  std::string buffer;
  append_record(buffer, Released{"k", 3});
  buffer += "x";
  EXPECT_FALSE(
      decode_record(RecordType::kReleased, std::string_view(buffer).substr(kRecordHeaderSize))
          .ok());
}

TEST(Record, UnknownTypeIsAnError) {
  std::string buffer;
  append_record(buffer, Released{"k", 3});
  buffer[0] = 0x77;
  std::string_view body = buffer;
  Result<RecordView> record = next_record(body);
  ASSERT_FALSE(record.ok());
  EXPECT_NE(record.error().message.find("unknown record type 119"), std::string::npos);
  buffer[0] = 0;
  body = buffer;
  EXPECT_FALSE(next_record(body).ok());
}

TEST(Record, OutOfRangeScopeIsAnError) {
  std::string buffer;
  append_record(buffer, Granted{testing::make_hold("k", 1)});
  buffer[buffer.size() - 2] = 5;  // scope is the second to last byte
  EXPECT_FALSE(
      decode_record(RecordType::kGranted, std::string_view(buffer).substr(kRecordHeaderSize)).ok());
}

TEST(Record, LeaseHorizonRoundTripsAndRejectsABadCleanFlag) {
  const LeaseHorizon h{testing::kStart + 31'000, 65'537, testing::kStart, true, 30'000};
  std::string buffer;
  append_record(buffer, h);
  const std::string_view payload = std::string_view(buffer).substr(kRecordHeaderSize);
  Result<Change> decoded = decode_record(RecordType::kLeaseHorizon, payload);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_TRUE(same_change(*decoded, h));
  EXPECT_EQ(std::get<LeaseHorizon>(*decoded).max_lease, 30'000);
  buffer[buffer.size() - 9] = 2;  // clean is the byte before max_lease: 0 or 1
  EXPECT_FALSE(
      decode_record(RecordType::kLeaseHorizon, std::string_view(buffer).substr(kRecordHeaderSize))
          .ok());
}

TEST(Record, ALeaseHorizonFromAnOlderLogHasNoLeaseBound) {
  std::string buffer;
  append_record(buffer, LeaseHorizon{testing::kStart + 31'000, 65'537, testing::kStart, false});
  // The record as older servers wrote it: without the trailing max_lease.
  const std::string_view payload =
      std::string_view(buffer).substr(kRecordHeaderSize, buffer.size() - kRecordHeaderSize - 8);
  Result<Change> decoded = decode_record(RecordType::kLeaseHorizon, payload);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(std::get<LeaseHorizon>(*decoded).max_lease, LeaseHorizon::kNoLeaseBound);
  EXPECT_EQ(std::get<LeaseHorizon>(*decoded).until, testing::kStart + 31'000);
}

TEST(Record, PayloadRunningPastTheFrameIsAnError) {
  std::string buffer;
  append_record(buffer, Released{"k", 3});
  std::string_view body = std::string_view(buffer).substr(0, buffer.size() - 1);
  EXPECT_FALSE(next_record(body).ok());
}

}  // namespace
}  // namespace holdfast::wal
