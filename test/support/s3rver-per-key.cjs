'use strict';
/**
 * s3rver with S3's atomicity per key: a test stand-in must not fail where S3 cannot.
 *
 * s3rver's file-system store writes an object's three files (bytes, md5, metadata) in place,
 * one after the other, and a HEAD or GET reads them the same way; S3 replaces an object in
 * one step (strong read-after-write consistency). Replicas that put the same content key
 * while another reads or deletes it (test content-pins-replicas) then met s3rver's half
 * written object: a HEAD answering 404 or a 500 InternalError. Here every store call on one
 * key runs alone (a call's own nested calls on that key go through), so each is atomic as on
 * S3. Started exactly like s3rver's own command line (test/support/s3-server.ts).
 */
const { AsyncLocalStorage } = require('node:async_hooks');
const path = require('node:path');

const s3rverDir = path.dirname(require.resolve('s3rver/package.json'));
const FilesystemStore = require(path.join(s3rverDir, 'lib/stores/filesystem.js'));

const tails = new Map(); // "bucket/key" -> the promise the next call on it waits for
const held = new AsyncLocalStorage(); // the keys the current call holds

function perKey(id, fn) {
  if (held.getStore()?.has(id)) return fn();
  const before = tails.get(id) ?? Promise.resolve();
  let done;
  const mine = new Promise((resolve) => (done = resolve));
  const tail = before.then(() => mine);
  tails.set(id, tail);
  return before.then(() =>
    held.run(new Set([...(held.getStore() ?? []), id]), fn).finally(() => {
      done();
      if (tails.get(id) === tail) tails.delete(id);
    }),
  );
}

const keyOf = {
  getMetadata: (bucket, key) => `${bucket}/${key}`,
  existsObject: (bucket, key) => `${bucket}/${key}`,
  getObject: (bucket, key) => `${bucket}/${key}`,
  putObject: (object) => `${object.bucket}/${object.key}`,
  copyObject: (_srcBucket, _srcKey, destBucket, destKey) => `${destBucket}/${destKey}`,
  deleteObject: (bucket, key) => `${bucket}/${key}`,
};
for (const [method, idOf] of Object.entries(keyOf)) {
  const original = FilesystemStore.prototype[method];
  FilesystemStore.prototype[method] = function (...args) {
    return perKey(idOf(...args), () => original.apply(this, args));
  };
}

require(path.join(s3rverDir, 'bin/s3rver.js'));
