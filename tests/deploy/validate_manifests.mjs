// Checks deploy/kubernetes as kubectl renders it: every object of each variant (the
// arm64, amd64 and etcd overlays, as `kubectl kustomize` wrote them) against the
// Kubernetes OpenAPI schema (kubernetes-models' generated validators: types, required
// fields, enums, formats; like kubeconform without --strict, unknown fields are not
// rejected, so the settings that matter are checked by path below), the layout of
// the kustomizations, the settings the deployment promises, and kms/ (kube-apiserver's
// KMS plugin: a static Pod and an EncryptionConfiguration, files for the nodes).
// Exits 1 listing every problem.
//
//   node validate_manifests.mjs NODE_MODULES DEPLOY_KUBERNETES_DIR RENDERED_DIR
// RENDERED_DIR holds arm64.yaml, amd64.yaml and etcd.yaml (manifests_test.sh).
import fs from "node:fs";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";

const [modules, dir, rendered] = process.argv.slice(2);
const yaml = (await import(path.join(modules, "js-yaml/index.js"))).default;
const problems = [];
const check = (ok, what) => { if (!ok) problems.push(what); };

// apiVersion -> the kubernetes-models module holding its kinds.
async function modelFor(apiVersion, kind) {
  const group = apiVersion === "v1" ? "v1" : apiVersion;
  const file = path.join(modules, "kubernetes-models", group, "index.js");
  if (!fs.existsSync(file)) return undefined;
  return (await import(file))[kind];
}

const loadAll = (file) => yaml.loadAll(fs.readFileSync(file, "utf8")).filter(Boolean);
const kustomizationOf = (folder) =>
  yaml.load(fs.readFileSync(path.join(dir, folder, "kustomization.yaml"), "utf8"));
// What `kubectl kustomize deploy/kubernetes/VARIANT` printed.
const renderedObjects = (variant) =>
  loadAll(path.join(rendered, `${variant}.yaml`)).map((obj) => ({ file: `${variant} overlay`, obj }));

// Every YAML file in FOLDER is one of its kustomization's resources.
function allListed(folder, kustomization) {
  for (const file of fs.readdirSync(path.join(dir, folder)).filter((f) => f.endsWith(".yaml"))) {
    check(file === "kustomization.yaml" || kustomization.resources.includes(file),
          `${folder}/${file} is not in ${folder}/kustomization.yaml`);
  }
}

// 1. The layout kustomize accepts: base/ and the overlays beside it (an overlay
//    inside its base's folder is a cycle to kustomize). Every YAML file in base/ is
//    listed; every object of the arm64 variant, as kubectl rendered it, is valid.
//    (kms/ holds node files that are never applied, checked in 4.)
check(!fs.existsSync(path.join(dir, "kustomization.yaml")),
      "deploy/kubernetes/kustomization.yaml: the overlays are beside the base, not inside it");
const kustomization = kustomizationOf("base");
allListed("base", kustomization);
const overlays = Object.fromEntries(["arm64", "amd64"].map((v) => [v, kustomizationOf(v)]));
for (const [variant, overlay] of Object.entries(overlays)) {
  check(isDeepStrictEqual(overlay.resources, ["../base"]), `${variant} overlay: builds on ../base alone`);
}
const objects = renderedObjects("arm64");
async function validate(file, obj) {
  const Model = await modelFor(obj.apiVersion, obj.kind);
  if (!Model) return check(false, `${file}: no schema for ${obj.apiVersion} ${obj.kind}`);
  try {
    new Model(obj).validate();
  } catch (error) {
    check(false, `${file}: ${obj.kind} ${obj.metadata?.name}: ${error.message}`);
  }
}
for (const { file, obj } of objects) await validate(file, obj);

function finish() {
  if (problems.length) {
    console.error(problems.map((p) => "FAIL " + p).join("\n"));
    process.exit(1);
  }
}
const find = (kind) => objects.map((o) => o.obj).find((o) => o.kind === kind);
const missing = ["Namespace", "PersistentVolumeClaim", "Deployment", "Service",
                 "HorizontalPodAutoscaler", "PodDisruptionBudget", "NetworkPolicy"]
  .filter((kind) => !find(kind));
for (const kind of missing) check(false, `no ${kind} in the kustomization's resources`);
if (missing.length) finish();  // the checks below need every object
const deployment = find("Deployment");
// amd64: the same objects but for the Deployment's node architecture.
const amd64Objects = renderedObjects("amd64");
for (const { file, obj } of amd64Objects) await validate(file, obj);
const amd64 = amd64Objects.map((o) => o.obj).find((o) => o.kind === "Deployment");
const asArm64 = structuredClone(amd64);
if (asArm64?.spec?.template?.spec?.nodeSelector) {
  asArm64.spec.template.spec.nodeSelector["kubernetes.io/arch"] = "arm64";
}
check(isDeepStrictEqual(asArm64, deployment), "amd64 overlay: only the node architecture differs");
check(isDeepStrictEqual(amd64Objects.map((o) => o.obj).filter((o) => o.kind !== "Deployment"),
                        objects.map((o) => o.obj).filter((o) => o.kind !== "Deployment")),
      "amd64 overlay: every object but the Deployment as in arm64");

// 2. The settings the deployment promises (docs/OPERATIONS.md, "Kubernetes").
const pod = deployment.spec.template.spec;
const [container] = pod.containers;
const args = container.args;
const flag = (name) => args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const mountOf = (volumeName) => container.volumeMounts.find((m) => m.name === volumeName);
const volume = (name) => pod.volumes.find((v) => v.name === name);

check(deployment.spec.replicas >= 3, "Deployment: at least 3 replicas");
check(pod.nodeSelector?.["kubernetes.io/arch"] === "arm64", "Deployment: arm64 nodes");
check(amd64.spec.template.spec.nodeSelector?.["kubernetes.io/arch"] === "amd64",
      "amd64 overlay: amd64 nodes");
for (const kind of ["requests", "limits"]) {
  for (const resource of ["cpu", "memory"]) {
    check(container.resources?.[kind]?.[resource], `container: resources.${kind}.${resource}`);
  }
}
check(pod.securityContext?.runAsNonRoot === true, "pod: runAsNonRoot");
check(pod.securityContext?.runAsUser === 65532, "pod: runAsUser 65532 (the image's user)");
check(pod.securityContext?.seccompProfile?.type === "RuntimeDefault", "pod: seccomp RuntimeDefault");
check(pod.automountServiceAccountToken === false, "pod: no service account token");
const security = container.securityContext ?? {};
check(security.runAsNonRoot === true, "container: runAsNonRoot");
check(security.readOnlyRootFilesystem === true, "container: read-only root filesystem");
check(security.allowPrivilegeEscalation === false, "container: no privilege escalation");
check(security.capabilities?.drop?.includes("ALL"), "container: drops ALL capabilities");

for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
  const command = container[probe]?.exec?.command ?? [];
  check(command[0] === "/usr/local/bin/sealbox" && command[1] === "health",
        `${probe}: runs sealbox health (the gRPC health check)`);
  const ca = command.find((a) => a.startsWith("--tls-ca="))?.split("=")[1];
  check(ca && ca.startsWith(mountOf("tls")?.mountPath + "/"), `${probe}: the CA from the tls mount`);
  // Readiness: serving. Startup and liveness: answering (--alive), so that a replica
  // refusing calls while etcd is out of reach is not restarted for it.
  const alive = command.includes("--alive");
  check(alive === (probe !== "readinessProbe"),
        `${probe}: ${probe === "readinessProbe" ? "without" : "with"} --alive`);
}
const zones = (pod.topologySpreadConstraints ?? []).find(
  (c) => c.topologyKey === "topology.kubernetes.io/zone");
check(zones?.labelSelector?.matchLabels?.["app.kubernetes.io/name"] === "sealbox",
      "pod: spread across zones");
const drain = Number(flag("drain-seconds"));
const preStop = container.lifecycle?.preStop?.sleep?.seconds ?? 0;
check(drain > 0, "container: --drain-seconds given");
check(pod.terminationGracePeriodSeconds > preStop + drain,
      `pod: terminationGracePeriodSeconds (${pod.terminationGracePeriodSeconds}) exceeds ` +
      `preStop (${preStop}) + --drain-seconds (${drain})`);

// Secrets as read-only files, each flag pointing into its mount.
for (const [name, flagName] of [["kek", "kek-file"], ["admin-token", "admin-token-file"],
                                ["tls", "tls-cert"], ["tls", "tls-key"]]) {
  const mount = mountOf(name);
  check(volume(name)?.secret?.secretName, `volume ${name}: a Secret`);
  check(mount?.readOnly === true, `volume ${name}: mounted read-only`);
  check(flag(flagName)?.startsWith(mount?.mountPath + "/"), `--${flagName}: inside the ${name} mount`);
}
const claim = volume("data")?.persistentVolumeClaim?.claimName;
const pvc = objects.map((o) => o.obj).find(
  (o) => o.kind === "PersistentVolumeClaim" && o.metadata.name === claim);
check(pvc?.spec.accessModes.includes("ReadWriteMany"), "data: a ReadWriteMany claim shared by replicas");
check(flag("data-dir") === mountOf("data")?.mountPath, "--data-dir: the shared volume");
check(flag("listen")?.endsWith(":" + container.ports.find((p) => p.name === "grpc").containerPort),
      "--listen: the grpc port");

const service = find("Service");
check(service.spec.clusterIP === "None", "Service: headless (client-side round robin)");
check(service.spec.ports.some((p) => p.name === "grpc" && p.appProtocol === "grpc"), "Service: grpc port");
const hpa = find("HorizontalPodAutoscaler");
check(hpa.spec.scaleTargetRef.name === deployment.metadata.name, "HPA: scales the Deployment");
check(hpa.spec.minReplicas >= 3, "HPA: at least 3 replicas");
const pdb = find("PodDisruptionBudget");
check(pdb.spec.minAvailable >= 2, "PDB: at least 2 replicas stay");
const policy = find("NetworkPolicy");
check(["Ingress", "Egress"].every((t) => policy.spec.policyTypes.includes(t)),
      "NetworkPolicy: limits ingress and egress");
const labels = deployment.spec.template.metadata.labels;
for (const selector of [deployment.spec.selector.matchLabels, service.spec.selector,
                        pdb.spec.selector.matchLabels, policy.spec.podSelector.matchLabels]) {
  check(Object.entries(selector).every(([k, v]) => labels[k] === v), "selectors match the pods");
}
check(find("Namespace").metadata.labels["pod-security.kubernetes.io/enforce"] === "restricted",
      "Namespace: restricted Pod Security Standard");
for (const { obj } of objects) {
  check(obj.kind === "Namespace" || obj.metadata.namespace === "sealbox",
        `${obj.kind} ${obj.metadata.name}: in namespace sealbox`);
}

// 3. The etcd overlay (deploy/kubernetes/etcd): the same replicas with no volume,
//    on etcd over TLS, and a three-member etcd of its own.
const etcdKustomization = kustomizationOf("etcd");
check(etcdKustomization.resources.includes("../arm64"), "etcd overlay: builds on ../arm64");
allListed("etcd", etcdKustomization);
const etcdObjects = renderedObjects("etcd");
for (const { file, obj } of etcdObjects) await validate(file, obj);
const inEtcd = (kind, name) => etcdObjects.map((o) => o.obj).find(
  (o) => o.kind === kind && (!name || o.metadata.name === name));
check(!inEtcd("PersistentVolumeClaim"), "etcd overlay: no shared volume claim");
const onEtcd = inEtcd("Deployment", "sealbox");
const etcdPod = onEtcd.spec.template.spec;
const etcdContainer = etcdPod.containers[0];
const etcdFlag = (name) => etcdContainer.args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
check(!etcdFlag("data-dir"), "etcd overlay: no --data-dir");
check(!etcdPod.volumes.some((v) => v.persistentVolumeClaim || v.emptyDir || v.hostPath),
      "etcd overlay: no volume but Secrets");
check(etcdPod.volumes.every((v) => etcdContainer.volumeMounts.some((m) => m.name === v.name)),
      "etcd overlay: every volume mounted");
const statefulSet = inEtcd("StatefulSet", "etcd");
const etcdService = inEtcd("Service", "etcd");
check(statefulSet?.spec.replicas === 3, "etcd: three members");
check(statefulSet?.spec.serviceName === etcdService?.metadata.name, "etcd: its headless Service");
const endpoints = (etcdFlag("etcd-endpoints") ?? "").split(",");
check(endpoints.length === 3 && endpoints.every((e, i) =>
        e === `etcd-${i}.${etcdService.metadata.name}.sealbox.svc:2379`),
      "--etcd-endpoints: the three members by their stable names");
const clientMount = etcdContainer.volumeMounts.find((m) => m.name === "etcd-client");
check(clientMount?.readOnly, "etcd client certificate: mounted read-only");
for (const name of ["etcd-ca", "etcd-cert", "etcd-key"]) {
  check(etcdFlag(name)?.startsWith(clientMount?.mountPath + "/"), `--${name}: inside the etcd-client mount`);
}
for (const name of ["tls-cert", "tls-key", "kek-file", "admin-token-file", "listen", "drain-seconds"]) {
  check(etcdFlag(name) === flag(name), `etcd overlay: --${name} as in the base`);
}
const etcdArgs = statefulSet?.spec.template.spec.containers[0].command ?? [];
for (const required of ["--client-cert-auth", "--peer-client-cert-auth",
                        "--auto-compaction-mode=periodic"]) {
  check(etcdArgs.includes(required), `etcd: ${required}`);
}
check(etcdArgs.some((a) => a.startsWith("--listen-client-urls=https://")), "etcd: TLS for clients");
check(inEtcd("PodDisruptionBudget", "etcd")?.spec.minAvailable === 2, "etcd: PDB keeps a majority");
const egress = inEtcd("NetworkPolicy", "sealbox").spec.egress;
check(egress.some((rule) => rule.ports?.some((p) => p.port === 2379) &&
        rule.to?.some((t) => t.podSelector?.matchLabels?.["app.kubernetes.io/name"] === "etcd")),
      "etcd overlay: sealbox may reach etcd's client port");
const etcdPolicy = inEtcd("NetworkPolicy", "etcd");
check(etcdPolicy?.spec.ingress.some((rule) => rule.ports?.some((p) => p.port === 2379) &&
        rule.from?.some((f) => f.podSelector?.matchLabels?.["app.kubernetes.io/name"] === "sealbox")),
      "etcd: clients only from sealbox");
for (const { obj } of etcdObjects) {
  check(obj.kind === "Namespace" || obj.metadata.namespace === "sealbox",
        `etcd overlay: ${obj.kind} ${obj.metadata.name}: in namespace sealbox`);
}

// 4. kms/: sealbox as kube-apiserver's KMS v2 plugin. A static Pod (kubelet-run, so
//    not in any kustomization) whose --kms-socket is the endpoint of the
//    EncryptionConfiguration kube-apiserver reads, in a directory both mount.
const kmsDir = path.join(dir, "kms");
const kmsFiles = ["static-pod.yaml", "encryption-config.yaml"];
for (const file of fs.readdirSync(kmsDir).filter((f) => f.endsWith(".yaml"))) {
  check(kmsFiles.includes(file),
        `kms/${file}: not checked (validate_manifests.mjs knows ${kmsFiles.join(", ")})`);
}
check(![kustomization, ...Object.values(overlays), etcdKustomization].some(
        (k) => k.resources.some((r) => r.startsWith("kms"))),
      "kms/: static pods are files on the nodes, in no kustomization");
const [kmsPods, encryptionConfigs] = kmsFiles.map(
  (file) => yaml.loadAll(fs.readFileSync(path.join(kmsDir, file), "utf8")).filter(Boolean));
check(kmsPods.length === 1 && kmsPods[0].kind === "Pod", "kms/static-pod.yaml: one Pod");
check(encryptionConfigs.length === 1, "kms/encryption-config.yaml: one object");
if (kmsPods[0]?.kind !== "Pod") finish();  // the checks below read the Pod
const kmsPod = kmsPods[0];
await validate("kms/static-pod.yaml", kmsPod);
const kmsSpec = kmsPod.spec ?? {};
const kmsContainer = kmsSpec.containers?.[0] ?? {};
const kmsArgs = kmsContainer.args ?? [];
const kmsFlag = (name) =>
  kmsArgs.find((a) => a.startsWith(`--${name}=`))?.slice(`--${name}=`.length);
const kmsMount = (name) => (kmsContainer.volumeMounts ?? []).find((m) => m.name === name);
// The hostPath volume and its mount whose path holds `file` (or is it).
const hostPathFor = (file) => {
  const mount = (kmsContainer.volumeMounts ?? []).find(
    (m) => file === m.mountPath || file?.startsWith(m.mountPath + "/"));
  return { mount, hostPath: (kmsSpec.volumes ?? []).find((v) => v.name === mount?.name)?.hostPath };
};

check(kmsPod.metadata?.namespace === "kube-system", "kms pod: in kube-system, beside kube-apiserver");
check(kmsSpec.priorityClassName === "system-node-critical", "kms pod: system-node-critical");
check(kmsSpec.hostNetwork === true, "kms pod: hostNetwork (its listener on the node's loopback)");
check(kmsContainer.image === container.image, `kms pod: the Deployment's image (${container.image})`);
check(kmsSpec.securityContext?.runAsNonRoot === true, "kms pod: runAsNonRoot");
check(kmsSpec.securityContext?.runAsUser === 65532, "kms pod: runAsUser 65532 (the image's user)");
check(kmsSpec.securityContext?.seccompProfile?.type === "RuntimeDefault",
      "kms pod: seccomp RuntimeDefault");
check(kmsSpec.automountServiceAccountToken === false, "kms pod: no service account token");
const kmsSecurity = kmsContainer.securityContext ?? {};
check(kmsSecurity.runAsNonRoot === true, "kms container: runAsNonRoot");
check(kmsSecurity.readOnlyRootFilesystem === true, "kms container: read-only root filesystem");
check(kmsSecurity.allowPrivilegeEscalation === false, "kms container: no privilege escalation");
check(kmsSecurity.capabilities?.drop?.includes("ALL"), "kms container: drops ALL capabilities");

const kmsListen = kmsFlag("listen") ?? "";
check(kmsListen.startsWith("127.0.0.1:"),
      `kms pod: --listen on 127.0.0.1 only (is "${kmsListen}")`);
for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
  const command = kmsContainer[probe]?.exec?.command ?? [];
  check(command[0] === "/usr/local/bin/sealbox" && command[1] === "health",
        `kms pod: ${probe} runs sealbox health`);
  check(command.includes(`--server=${kmsListen}`), `kms pod: ${probe} asks --listen's address`);
  check(command.includes("--alive") === (probe !== "readinessProbe"),
        `kms pod: ${probe} ${probe === "readinessProbe" ? "without" : "with"} --alive`);
}
// The names rules of server/keystore/names.h.
const kmsKey = kmsFlag("kms-key") ?? "";
check(/^[a-z][a-z0-9_-]{0,63}\/[A-Za-z0-9_.-]{1,64}$/.test(kmsKey),
      `kms pod: --kms-key "${kmsKey}" is TENANT/KEY (tenant [a-z][a-z0-9_-]*, key [A-Za-z0-9_.-]+)`);
const socketMode = kmsFlag("kms-socket-mode") ?? "0600";
check(/^0?[0-7]{3}$/.test(socketMode) && (parseInt(socketMode, 8) & 0o007) === 0,
      `kms pod: --kms-socket-mode ${socketMode} is octal and gives others nothing`);
const socketPath = kmsFlag("kms-socket") ?? "";
const socketDir = path.posix.dirname(socketPath);
const socketVolume = hostPathFor(socketPath);
check(socketPath.startsWith("/") && socketVolume.mount?.mountPath === socketDir,
      `kms pod: --kms-socket (${socketPath}) directly in a mounted directory`);
check(socketVolume.hostPath?.type === "DirectoryOrCreate",
      "kms pod: the socket's directory a hostPath of type DirectoryOrCreate");
// kube-apiserver mounts the host directory at the same path (README.md), so the
// endpoint it dials is the path the server binds.
check(socketVolume.hostPath?.path === socketDir,
      `kms pod: the socket's hostPath (${socketVolume.hostPath?.path ?? "none"}) is mounted ` +
      "at its own path");
check(!socketVolume.mount?.readOnly,
      "kms pod: the socket's directory writable (the server binds there)");
for (const name of ["kek-file", "admin-token-file"]) {
  const { mount, hostPath } = hostPathFor(kmsFlag(name));
  check(hostPath?.path && mount?.readOnly === true,
        `kms pod: --${name} in a read-only hostPath mount`);
}
// The keystore: a node-local file, or (the commented alternative) etcd.
if (!kmsFlag("etcd-endpoints")) {
  const data = hostPathFor(kmsFlag("data-dir"));
  check(data.hostPath?.path && data.mount.mountPath === kmsFlag("data-dir"),
        "kms pod: --data-dir a hostPath mount (or --etcd-endpoints)");
}
check(!(kmsSpec.volumes ?? []).some((v) => v.secret || v.configMap || v.persistentVolumeClaim),
      "kms pod: hostPath volumes only (a static pod cannot use Secrets, ConfigMaps or claims)");
check((kmsSpec.volumes ?? []).every((v) => kmsMount(v.name)), "kms pod: every volume mounted");

// kubernetes-models has no schema for apiserver.config.k8s.io: checked field by field.
const encryption = encryptionConfigs[0] ?? {};
check(encryption.apiVersion === "apiserver.config.k8s.io/v1" &&
        encryption.kind === "EncryptionConfiguration",
      "kms/encryption-config.yaml: an apiserver.config.k8s.io/v1 EncryptionConfiguration");
const forSecrets = (encryption.resources ?? []).filter((r) => r.resources?.includes("secrets"));
check(forSecrets.length === 1, "encryption config: one entry for secrets");
for (const [i, entry] of (encryption.resources ?? []).entries()) {
  const where = `encryption config: resources[${i}] (${entry.resources})`;
  const providers = entry.providers ?? [];
  const kms = providers[0]?.kms;
  check(kms, `${where}: kms is the first provider (the first one seals every write)`);
  if (!kms) continue;
  check(kms.apiVersion === "v2", `${where}: kms apiVersion v2 (is ${kms.apiVersion})`);
  check(/^[^:]+$/.test(kms.name ?? ""),
        `${where}: kms name given, without ":" (it prefixes stored values)`);
  const endpoint = kms.endpoint ?? "";
  check(endpoint.startsWith("unix:///"),
        `${where}: kms endpoint a unix:// socket path (is "${endpoint}")`);
  check(endpoint.slice("unix://".length) === socketPath,
        `${where}: kms endpoint ${endpoint} is the pod's --kms-socket ${socketPath}`);
  check(path.posix.dirname(endpoint.slice("unix://".length)) === socketVolume.hostPath?.path,
        `${where}: the endpoint's directory is the pod's hostPath ` +
        `(${socketVolume.hostPath?.path ?? "none"})`);
  check(/^\d+(ms|s|m)$/.test(kms.timeout ?? ""), `${where}: kms timeout set (is ${kms.timeout})`);
  check(kms.cachesize === undefined, `${where}: no cachesize (KMS v1 only)`);
  check(providers.length >= 2 && "identity" in providers.at(-1) &&
          Object.keys(providers.at(-1)).length === 1,
        `${where}: identity last (reads what was written before encryption)`);
  check(providers.slice(0, -1).every((p) => !("identity" in p)),
        `${where}: identity only last (first, it would write plaintext)`);
}

finish();
console.log(`${objects.length} objects valid in the arm64 and amd64 overlays, ` +
            `${etcdObjects.length} in the etcd overlay, as kubectl kustomize rendered them ` +
            "(kubernetes-models, Kubernetes 1.34 schema), and kms/'s static Pod and " +
            "EncryptionConfiguration; every promised setting present");
