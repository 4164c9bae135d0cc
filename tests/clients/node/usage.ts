// Compiled with `tsc --noEmit --strict` by node_client_test: the library's types
// (client/node/index.d.ts) as a TypeScript program uses them.
import { Readable } from 'node:stream';
import {
  BatchResult, ChecksumError, Client, DecryptionFailedError, FileResult, Opened, SealboxError,
  UnavailableError, crc32c,
} from 'sealbox';

async function main(): Promise<void> {
  const client = new Client('127.0.0.1:50051', {
    token: process.env.SEALBOX_TOKEN,
    timeoutMs: 10_000,
    retry: { maxAttempts: 3, onRetry: ({ attempt, delayMs, error }) => console.log(attempt, delayMs, error.code) },
    tokenRenewal: { expiresAt: new Date(Date.now() + 3600_000), onRenewed: (token: string, at: Date) => void [token, at] },
    tls: { caFile: 'ca.pem', serverName: 'sealbox.internal' },
  });
  const { ciphertext, keyVersion }: { ciphertext: Buffer; keyVersion: number } =
    await client.seal('default', 'hello', { associatedData: 'row-7' });
  const opened: Opened = await client.open('default', ciphertext, { associatedData: Buffer.from('row-7') });
  const text: string = opened.plaintext.toString('utf8');
  const rewrapped = await client.rewrap('default', ciphertext);
  const versions: number[] = [keyVersion, rewrapped.previousKeyVersion];

  const results: Array<BatchResult<Opened>> = await client.openBatch([{ key: 'default', ciphertext }]);
  for (const item of results) {
    if (item.ok) console.log(item.result.plaintext.length);
    else if (item.error instanceof DecryptionFailedError) console.log(item.error.codeName);
  }
  const dataKey = await client.generateDataKey('default', { bytes: 32, includePlaintext: true });
  if (dataKey.plaintext !== null) dataKey.plaintext.fill(0);
  const renewed = await client.renewToken({ ttlSeconds: 3600 });
  const expires: Date = renewed.expiresAt;

  const chunks: Buffer[] = [];
  for await (const chunk of client.sealStream('default', Readable.from([Buffer.from('x')]))) chunks.push(chunk);
  for await (const chunk of client.openStream('default', () => chunks, { segmentSize: 4096 })) chunks.push(chunk);
  const file: FileResult = await client.sealFile('default', 'in', 'out', {
    onProgress: (done: number, total: number) => console.log(done / total),
  });
  await client.openEnvelopeFile('default', 'in.env', 'out', { associatedData: 'file-1' });
  try {
    await client.openFile('default', 'in', 'out');
  } catch (err) {
    if (err instanceof ChecksumError || err instanceof UnavailableError) throw err;
    if (err instanceof SealboxError) console.log(err.code, err.codeName, err.message, err.requestId);
  }
  console.log(text, versions, expires, file.bytesWritten, crc32c(Buffer.from('123456789')), client.token);
  client.close();
}

void main();
