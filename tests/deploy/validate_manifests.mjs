// Checks deploy/kubernetes offline: every object against the Kubernetes OpenAPI
// schema (kubernetes-models' generated validators: types, required fields, enums,
// formats; like kubeconform without --strict, unknown fields are not rejected, so
// the settings that matter are checked by path below), the kustomizations, and the
// settings the deployment promises. Exits 1 listing every problem.
//
//   node validate_manifests.mjs NODE_MODULES DEPLOY_KUBERNETES_DIR
import fs from "node:fs";
import path from "node:path";

const [modules, dir] = process.argv.slice(2);
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

function readYaml(file) {
  return yaml.loadAll(fs.readFileSync(path.join(dir, file), "utf8")).filter(Boolean);
}

// Applies the JSON patches (RFC 6902 replace, add, remove) a kustomization names for
// `obj`; null when a strategic-merge patch deletes it ($patch: delete).
function applyPatches(kustomization, obj, where) {
  const copy = structuredClone(obj);
  for (const { target, patch } of kustomization.patches ?? []) {
    const ops = yaml.load(patch);
    if (!Array.isArray(ops)) {  // a strategic-merge patch: only whole deletions here
      check(ops.$patch === "delete", `${where}: only "$patch: delete" merge patches are checked`);
      if (ops.kind === obj.kind && ops.metadata.name === obj.metadata.name) return null;
      continue;
    }
    if (target.kind !== obj.kind || target.name !== obj.metadata.name) continue;
    for (const op of ops) {
      check(["replace", "add", "remove"].includes(op.op), `${where}: op ${op.op} is not checked`);
      const keys = op.path.split("/").slice(1).map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
      let at = copy;
      for (const key of keys.slice(0, -1)) at = at?.[key];
      const last = keys.at(-1);
      if (op.op === "add" && Array.isArray(at)) {
        if (last === "-") at.push(op.value); else at.splice(Number(last), 0, op.value);
        continue;
      }
      check(at !== undefined && last in at, `${where}: ${op.path} does not exist`);
      if (at === undefined) continue;
      if (op.op === "remove") {
        if (Array.isArray(at)) at.splice(Number(last), 1); else delete at[last];
      } else {
        at[last] = op.value;
      }
    }
  }
  return copy;
}

// 1. Every object in every file the kustomization lists is valid, and every YAML
//    file in the folder is listed.
const kustomization = yaml.load(fs.readFileSync(path.join(dir, "kustomization.yaml"), "utf8"));
const listed = new Set(kustomization.resources);
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".yaml"))) {
  check(file === "kustomization.yaml" || listed.has(file), `${file} is not in kustomization.yaml`);
}
const objects = [];
for (const file of listed) {
  for (const obj of readYaml(file)) objects.push({ file, obj });
}
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
const amd64 = applyPatches(
  yaml.load(fs.readFileSync(path.join(dir, "amd64", "kustomization.yaml"), "utf8")), deployment,
  "amd64 overlay");
await validate("amd64/kustomization.yaml", amd64);

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
const etcdDir = path.join(dir, "etcd");
const etcdKustomization = yaml.load(fs.readFileSync(path.join(etcdDir, "kustomization.yaml"), "utf8"));
check(etcdKustomization.resources.includes(".."), "etcd overlay: builds on deploy/kubernetes");
for (const file of fs.readdirSync(etcdDir).filter((f) => f.endsWith(".yaml"))) {
  check(file === "kustomization.yaml" || etcdKustomization.resources.includes(file),
        `etcd/${file} is not in etcd/kustomization.yaml`);
}
const etcdObjects = [];
for (const { obj } of objects) {
  const patched = applyPatches(etcdKustomization, obj, "etcd overlay");
  if (patched) etcdObjects.push({ file: "etcd overlay", obj: patched });
}
for (const file of etcdKustomization.resources.filter((r) => r !== "..")) {
  for (const obj of yaml.loadAll(fs.readFileSync(path.join(etcdDir, file), "utf8")).filter(Boolean)) {
    etcdObjects.push({ file: `etcd/${file}`, obj });
  }
}
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

finish();
console.log(`${objects.length + 1} objects valid, and ${etcdObjects.length} in the etcd ` +
            "overlay (kubernetes-models, Kubernetes 1.34 schema); every promised setting present");
