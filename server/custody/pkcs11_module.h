// A PKCS#11 module (an HSM vendor's shared library: SoftHSM2, CloudHSM, Luna,
// YubiHSM 2, Thales), loaded at run time, initialized once and finalized when the
// last user lets go. Only this file and pkcs11_root_key.cc see the PKCS#11 header,
// compiled with CRYPTOKI_GNU (BUILD.bazel) so that none of its compatibility macros
// (it #defines `value`, for one) leak into other code.
#ifndef SEALBOX_SERVER_CUSTODY_PKCS11_MODULE_H_
#define SEALBOX_SERVER_CUSTODY_PKCS11_MODULE_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct ck_function_list;

namespace sealbox::server::custody {

class Pkcs11Module {
 public:
  // dlopens `path`, then C_GetFunctionList and C_Initialize (with OS locking: the
  // server calls it from several threads). FAILED_PRECONDITION, naming the path and
  // dlerror() or the CKR_ code, when any step fails.
  static absl::StatusOr<std::shared_ptr<Pkcs11Module>> Load(const std::string& path);

  Pkcs11Module(const Pkcs11Module&) = delete;
  Pkcs11Module& operator=(const Pkcs11Module&) = delete;
  // C_Finalize, then dlclose.
  ~Pkcs11Module();

  // C_Finalize then C_Initialize: what some modules need to find a device again after
  // losing it (SoftHSM2 once its token's files were gone; network HSMs' clients after
  // an outage). Every session of the process ends; their users connect again.
  absl::Status Reinitialize();

  const std::string& path() const { return path_; }
  ck_function_list* functions() const { return functions_; }

 private:
  Pkcs11Module(std::string path, void* handle, ck_function_list* functions)
      : path_(std::move(path)), handle_(handle), functions_(functions) {}

  std::string path_;
  void* handle_;
  ck_function_list* functions_;
};

// "CKR_PIN_INCORRECT (0xa0)" for a PKCS#11 return value: the name for the codes an
// operator meets, the number always.
std::string Pkcs11ErrorName(unsigned long rv);

}  // namespace sealbox::server::custody

#endif  // SEALBOX_SERVER_CUSTODY_PKCS11_MODULE_H_
