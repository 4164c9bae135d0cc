// Sees a sealbox server through grpc-js-reflection-client, a reflection client
// written by others, so that sealbox's reflection is checked against more than our
// own reading of the protocol. Usage: node reflection_check.js ADDRESS VERSION
// (v1 or v1alpha), with SEALBOX_TOKEN set. Prints one JSON line of what it saw.
'use strict';

const grpc = require('@grpc/grpc-js');
const { GrpcReflection } = require('grpc-js-reflection-client');

const LOADER = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

function unary(client, method, request, metadata) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata, (error, response) => (error ? reject(error) : resolve(response)));
  });
}

function stream(client, method, requests, metadata) {
  return new Promise((resolve, reject) => {
    const call = client[method](metadata);
    const responses = [];
    call.on('data', (response) => responses.push(response));
    call.on('error', reject);
    call.on('end', () => resolve(responses));
    for (const request of requests) call.write(request);
    call.end();
  });
}

async function main() {
  const [address, version] = process.argv.slice(2);
  const credentials = grpc.credentials.createInsecure();
  const reflection = new GrpcReflection(address, credentials, {}, version);
  const services = await reflection.listServices();

  // Each service's descriptor, resolved with its imports, as the library does it.
  const packages = {};
  for (const service of ['sealbox.v1.Crypto', 'sealbox.v1.Admin', 'grpc.health.v1.Health']) {
    const descriptor = await reflection.getDescriptorBySymbol(service);
    packages[service] = descriptor.getPackageObject(LOADER);
  }
  const Crypto = packages['sealbox.v1.Crypto'].sealbox.v1.Crypto;
  const Health = packages['grpc.health.v1.Health'].grpc.health.v1.Health;
  const metadata = new grpc.Metadata();
  metadata.add('authorization', `Bearer ${process.env.SEALBOX_TOKEN}`);

  const health = await unary(new Health(address, credentials), 'Check', { service: '' },
                             new grpc.Metadata());
  const crypto = new Crypto(address, credentials);
  const plaintext = Buffer.from(`hello from node over reflection ${version}`);
  const sealed = await unary(crypto, 'Seal', { key: 'default', plaintext }, metadata);
  const opened = await unary(crypto, 'Open', { key: 'default', ciphertext: sealed.ciphertext },
                             metadata);
  const data = Buffer.alloc(100000, 7);
  const sealedStream = await stream(crypto, 'SealStream', [
    { start: { key: 'default', segment_size: 4096 } },
    { plaintext_chunk: data.subarray(0, 60000) },
    { plaintext_chunk: data.subarray(60000) },
  ], metadata);
  const streamCiphertext = Buffer.concat(sealedStream.map((m) => m.ciphertext_chunk));
  const openedStream = await stream(crypto, 'OpenStream', [
    { start: { key: 'default' } },
    { ciphertext_chunk: streamCiphertext },
  ], metadata);
  const streamPlaintext = Buffer.concat(openedStream.map((m) => m.plaintext_chunk));

  console.log(JSON.stringify({
    services: services.sort(),
    adminMethods: Object.keys(packages['sealbox.v1.Admin'].sealbox.v1.Admin.service).sort(),
    health: health.status,
    opened: opened.plaintext.toString(),
    keyVersion: sealed.key_version,
    streamBytes: streamCiphertext.length,
    streamOpened: streamPlaintext.equals(data),
  }));
}

main().then(() => process.exit(0), (error) => {
  console.error(`reflection_check: ${error.stack || error}`);
  process.exit(1);
});
