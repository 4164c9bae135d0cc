#include "server/custody/pkcs11_module.h"

#include <dlfcn.h>

#include <map>
#include <utility>

#include "absl/synchronization/mutex.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "p11-kit-1/p11-kit/pkcs11.h"

namespace sealbox::server::custody {

namespace {

// One Pkcs11Module per path while any is in use: a module is initialized once per
// process, and finalizing it under another user would end that user's sessions.
absl::Mutex loaded_mu(absl::kConstInit);
std::map<std::string, std::weak_ptr<Pkcs11Module>>& Loaded() {
  static auto* loaded = new std::map<std::string, std::weak_ptr<Pkcs11Module>>;
  return *loaded;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Pkcs11Module>> Pkcs11Module::Load(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("no PKCS#11 module given (--hsm-module)");
  absl::MutexLock lock(&loaded_mu);
  if (std::shared_ptr<Pkcs11Module> module = Loaded()[path].lock()) return module;
  // RTLD_LOCAL: the vendor's symbols (often its own OpenSSL) stay its own.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(absl::StrCat("cannot load the PKCS#11 module ", path, ": ",
                                                      why != nullptr ? why : "dlopen failed"));
  }
  using GetFunctionList = ck_rv_t (*)(struct ck_function_list**);
  auto get = reinterpret_cast<GetFunctionList>(dlsym(handle, "C_GetFunctionList"));
  struct ck_function_list* functions = nullptr;
  if (get == nullptr || get(&functions) != CKR_OK || functions == nullptr) {
    dlclose(handle);
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a PKCS#11 module: it has no working C_GetFunctionList"));
  }
  struct ck_c_initialize_args args = {};
  args.flags = CKF_OS_LOCKING_OK;
  const ck_rv_t rv = functions->C_Initialize(&args);
  if (rv != CKR_OK) {
    dlclose(handle);
    return absl::FailedPreconditionError(
        absl::StrCat("the PKCS#11 module ", path, " failed to initialize: ", Pkcs11ErrorName(rv)));
  }
  std::shared_ptr<Pkcs11Module> module(new Pkcs11Module(path, handle, functions));
  Loaded()[path] = module;
  return module;
}

Pkcs11Module::~Pkcs11Module() {
  absl::MutexLock lock(&loaded_mu);
  functions_->C_Finalize(nullptr);
  dlclose(handle_);
}

absl::Status Pkcs11Module::Reinitialize() {
  absl::MutexLock lock(&loaded_mu);
  functions_->C_Finalize(nullptr);
  struct ck_c_initialize_args args = {};
  args.flags = CKF_OS_LOCKING_OK;
  const ck_rv_t rv = functions_->C_Initialize(&args);
  if (rv != CKR_OK) {
    return absl::UnavailableError(absl::StrCat(
        "the PKCS#11 module ", path_, " failed to initialize again: ", Pkcs11ErrorName(rv)));
  }
  return absl::OkStatus();
}

std::string Pkcs11ErrorName(unsigned long rv) {
  // The codes an operator meets; others are shown by number alone.
  static constexpr struct {
    unsigned long rv;
    const char* name;
  } kNames[] = {
      {CKR_OK, "CKR_OK"},
      {CKR_GENERAL_ERROR, "CKR_GENERAL_ERROR"},
      {CKR_FUNCTION_FAILED, "CKR_FUNCTION_FAILED"},
      {CKR_ARGUMENTS_BAD, "CKR_ARGUMENTS_BAD"},
      {CKR_DEVICE_ERROR, "CKR_DEVICE_ERROR"},
      {CKR_DEVICE_REMOVED, "CKR_DEVICE_REMOVED"},
      {CKR_TOKEN_NOT_PRESENT, "CKR_TOKEN_NOT_PRESENT"},
      {CKR_TOKEN_NOT_RECOGNIZED, "CKR_TOKEN_NOT_RECOGNIZED"},
      {CKR_SESSION_CLOSED, "CKR_SESSION_CLOSED"},
      {CKR_SESSION_HANDLE_INVALID, "CKR_SESSION_HANDLE_INVALID"},
      {CKR_OBJECT_HANDLE_INVALID, "CKR_OBJECT_HANDLE_INVALID"},
      {CKR_KEY_HANDLE_INVALID, "CKR_KEY_HANDLE_INVALID"},
      {CKR_KEY_FUNCTION_NOT_PERMITTED, "CKR_KEY_FUNCTION_NOT_PERMITTED"},
      {CKR_MECHANISM_INVALID, "CKR_MECHANISM_INVALID"},
      {CKR_MECHANISM_PARAM_INVALID, "CKR_MECHANISM_PARAM_INVALID"},
      {CKR_ENCRYPTED_DATA_INVALID, "CKR_ENCRYPTED_DATA_INVALID"},
      {CKR_ENCRYPTED_DATA_LEN_RANGE, "CKR_ENCRYPTED_DATA_LEN_RANGE"},
      {CKR_PIN_INCORRECT, "CKR_PIN_INCORRECT"},
      {CKR_PIN_LOCKED, "CKR_PIN_LOCKED"},
      {CKR_PIN_EXPIRED, "CKR_PIN_EXPIRED"},
      {CKR_USER_NOT_LOGGED_IN, "CKR_USER_NOT_LOGGED_IN"},
      {CKR_USER_PIN_NOT_INITIALIZED, "CKR_USER_PIN_NOT_INITIALIZED"},
      {CKR_TEMPLATE_INCONSISTENT, "CKR_TEMPLATE_INCONSISTENT"},
      {CKR_CRYPTOKI_NOT_INITIALIZED, "CKR_CRYPTOKI_NOT_INITIALIZED"},
      {CKR_CRYPTOKI_ALREADY_INITIALIZED, "CKR_CRYPTOKI_ALREADY_INITIALIZED"},
  };
  for (const auto& known : kNames) {
    if (known.rv == rv) return absl::StrFormat("%s (0x%x)", known.name, rv);
  }
  return absl::StrFormat("CKR 0x%x", rv);
}

}  // namespace sealbox::server::custody
