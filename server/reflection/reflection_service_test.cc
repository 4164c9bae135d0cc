#include "server/reflection/reflection_service.h"

#include "gtest/gtest.h"
#include "server/reflection/api_descriptor_set.h"
#include "server/reflection/descriptor_index.h"

namespace sealbox::server {
namespace {

TEST(ReflectionTest, RefusesToListAServiceItCannotDescribe) {
  auto reflection = Reflection::Create({"sealbox.v1.Crypto", "sealbox.v1.NoSuchService"});
  ASSERT_FALSE(reflection.ok());
  EXPECT_NE(reflection.status().message().find("sealbox.v1.NoSuchService"), std::string::npos);
}

TEST(ReflectionTest, ListsItsOwnServicesBesideTheServers) {
  auto reflection = Reflection::Create({"sealbox.v1.Crypto", "grpc.health.v1.Health"});
  ASSERT_TRUE(reflection.ok()) << reflection.status();
  EXPECT_EQ((*reflection)->service_names(),
            (std::vector<std::string>{"sealbox.v1.Crypto", "grpc.health.v1.Health",
                                      "grpc.reflection.v1.ServerReflection",
                                      "grpc.reflection.v1alpha.ServerReflection"}));
  EXPECT_EQ((*reflection)->services().size(), 2u);
}

TEST(DescriptorIndexTest, AnswersAFileWithEveryFileItImportsOnce) {
  auto index = DescriptorIndex::FromSet(ApiDescriptorSet());
  ASSERT_TRUE(index.ok()) << index.status();
  auto files = (*index)->FileContainingSymbol("sealbox.v1.Admin.GetKey");
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(*files,
            (std::vector<std::string>{"sealbox/v1/admin.proto", "google/protobuf/timestamp.proto",
                                      "google/protobuf/duration.proto"}));
  // Served as protoc wrote it: with the comments.
  EXPECT_NE((*index)->SerializedFile("sealbox/v1/admin.proto").find("rotate first"),
            std::string::npos);
}

TEST(DescriptorIndexTest, UnknownNamesAreNotFoundAndNeverEchoedRaw) {
  auto index = DescriptorIndex::FromSet(ApiDescriptorSet());
  ASSERT_TRUE(index.ok());
  auto files = (*index)->FileContainingSymbol("no.such\nSymbol\x01");
  ASSERT_EQ(files.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(files.status().message(), "symbol \"no.such\\nSymbol\\x01\" not found");
  EXPECT_EQ((*index)->File("no/such.proto").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((*index)->ExtensionNumbers("sealbox.v1.Nope").status().code(),
            absl::StatusCode::kNotFound);
  auto numbers = (*index)->ExtensionNumbers("sealbox.v1.SealRequest");
  ASSERT_TRUE(numbers.ok());
  EXPECT_TRUE(numbers->empty());
}

}  // namespace
}  // namespace sealbox::server
