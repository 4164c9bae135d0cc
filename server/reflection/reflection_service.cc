#include "server/reflection/reflection_service.h"

#include <utility>

#include <set>
#include "absl/strings/str_cat.h"
#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "server/reflection/api_descriptor_set.h"

namespace sealbox::server {
namespace {

// The generated types of one protocol version; the messages of the two versions
// are the same, only their package differs.
template <typename ServiceT, typename RequestT, typename ResponseT>
struct Version {
  using Service = ServiceT;
  using Request = RequestT;
  using Response = ResponseT;
};
namespace v1 = ::grpc::reflection::v1;
namespace v1alpha = ::grpc::reflection::v1alpha;
using V1 = Version<v1::ServerReflection::Service, v1::ServerReflectionRequest,
                   v1::ServerReflectionResponse>;
using V1Alpha = Version<v1alpha::ServerReflection::Service, v1alpha::ServerReflectionRequest,
                        v1alpha::ServerReflectionResponse>;

constexpr const char* kOwnNames[] = {"grpc.reflection.v1.ServerReflection",
                                     "grpc.reflection.v1alpha.ServerReflection"};

template <typename V>
class ReflectionService final : public V::Service {
 public:
  using Request = typename V::Request;
  using Response = typename V::Response;

  ReflectionService(const DescriptorIndex* index, const std::vector<std::string>* names)
      : index_(index), names_(names) {}

  grpc::Status ServerReflectionInfo(grpc::ServerContext*,
                                    grpc::ServerReaderWriter<Response, Request>* stream) override {
    Request request;
    std::set<std::string> sent;  // files this stream already has
    while (stream->Read(&request)) {
      Response response;
      response.set_valid_host(request.host());
      *response.mutable_original_request() = request;
      Answer(request, sent, response);
      if (!stream->Write(response)) break;
    }
    return grpc::Status::OK;
  }

 private:
  void Answer(const Request& request, std::set<std::string>& sent, Response& response) const {
    absl::StatusOr<std::vector<std::string>> files;
    switch (request.message_request_case()) {
      case Request::kListServices:
        for (const std::string& name : *names_) {
          response.mutable_list_services_response()->add_service()->set_name(name);
        }
        return;
      case Request::kAllExtensionNumbersOfType: {
        absl::StatusOr<std::vector<int>> numbers =
            index_->ExtensionNumbers(request.all_extension_numbers_of_type());
        if (!numbers.ok()) return SetError(numbers.status(), response);
        auto* out = response.mutable_all_extension_numbers_response();
        out->set_base_type_name(request.all_extension_numbers_of_type());
        for (int number : *numbers) out->add_extension_number(number);
        return;
      }
      case Request::kFileByFilename:
        files = index_->File(request.file_by_filename());
        break;
      case Request::kFileContainingSymbol:
        files = index_->FileContainingSymbol(request.file_containing_symbol());
        break;
      case Request::kFileContainingExtension:
        files =
            index_->FileContainingExtension(request.file_containing_extension().containing_type(),
                                            request.file_containing_extension().extension_number());
        break;
      default:
        files = absl::UnimplementedError("the request asks nothing reflection answers");
    }
    if (!files.ok()) return SetError(files.status(), response);
    // The file asked for every time; the files it imports once per stream, as
    // clients keep what they were sent.
    auto* out = response.mutable_file_descriptor_response();
    for (const std::string& name : *files) {
      if (sent.insert(name).second || name == files->front()) {
        out->add_file_descriptor_proto(index_->SerializedFile(name));
      }
    }
  }

  static void SetError(const absl::Status& status, Response& response) {
    response.mutable_error_response()->set_error_code(static_cast<int>(status.code()));
    response.mutable_error_response()->set_error_message(std::string(status.message()));
  }

  const DescriptorIndex* index_;
  const std::vector<std::string>* names_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Reflection>> Reflection::Create(std::vector<std::string> services) {
  absl::StatusOr<std::unique_ptr<DescriptorIndex>> index =
      DescriptorIndex::FromSet(ApiDescriptorSet());
  if (!index.ok()) return index.status();
  std::unique_ptr<Reflection> reflection(new Reflection);
  reflection->index_ = *std::move(index);
  for (const char* own : kOwnNames) services.push_back(own);
  for (const std::string& name : services) {
    if (!reflection->index_->HasService(name)) {
      return absl::InternalError(
          absl::StrCat("reflection has no descriptor for the service ", name));
    }
  }
  reflection->names_ = std::move(services);
  reflection->services_.push_back(
      std::make_unique<ReflectionService<V1>>(reflection->index_.get(), &reflection->names_));
  reflection->services_.push_back(
      std::make_unique<ReflectionService<V1Alpha>>(reflection->index_.get(), &reflection->names_));
  return reflection;
}

Reflection::~Reflection() = default;

std::vector<grpc::Service*> Reflection::services() const {
  std::vector<grpc::Service*> services;
  for (const auto& service : services_) services.push_back(service.get());
  return services;
}

}  // namespace sealbox::server
