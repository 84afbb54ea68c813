import { describe, expect, it } from 'vitest';
import { AgentMessage, asyncApiDocument, catalog, messageSummaries, rpcMethods, ServerMessage } from '../src/index.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const doc = asyncApiDocument({ serverVersion: '9.9.9' }) as any;
const key = (t: string) => t.replace(/\./g, '_');

describe('the AsyncAPI document of the agent link', () => {
  it('is AsyncAPI 3.0 on the agent connect channel', () => {
    expect(doc.asyncapi).toBe('3.0.0');
    expect(doc.channels.link.address).toBe('/api/agent/connect/');
    expect(doc.info.description).toContain('9.9.9');
  });

  it('has a summary for every catalog message', () => {
    expect(Object.keys(messageSummaries).sort()).toEqual(Object.keys(catalog).sort());
    for (const s of Object.values(messageSummaries)) expect(s.length).toBeGreaterThan(10);
  });

  it('describes every catalog message with its literal type in the payload schema', () => {
    for (const type of Object.keys(catalog)) {
      const m = doc.components.messages[key(type)];
      expect(m, type).toBeDefined();
      const payload = m.payload;
      // A discriminated union (rpc.response) becomes anyOf; each branch pins the type.
      const branches = payload.anyOf ?? payload.oneOf ?? [payload];
      for (const b of branches) expect(b.properties.type.const, type).toBe(type);
      expect(doc.channels.link.messages[key(type)]).toEqual({ $ref: `#/components/messages/${key(type)}` });
    }
  });

  it('splits the messages by direction exactly as the side unions do', () => {
    const names = (op: { messages: Array<{ $ref: string }> }) => op.messages.map((r) => r.$ref.split('/').pop()).sort();
    // Each option is an object with a literal `type`, or a discriminated union of such objects.
    type Option = { shape?: { type: { value: string } }; options?: Option[] };
    const literal = (o: Option): string => (o.shape ? o.shape.type.value : literal(o.options![0]!));
    const typesOf = (u: typeof AgentMessage | typeof ServerMessage) => (u.options as unknown as Option[]).map((o) => key(literal(o)));
    expect(names(doc.operations.receiveFromAgent)).toEqual([...typesOf(AgentMessage), 'data_frame'].sort());
    expect(names(doc.operations.sendToAgent)).toEqual([...typesOf(ServerMessage), 'data_frame'].sort());
    expect(doc.operations.receiveFromAgent.action).toBe('receive');
    expect(doc.operations.sendToAgent.action).toBe('send');
  });

  it('keeps the schema constraints the link validates (required fields, patterns)', () => {
    const hello = doc.components.messages.hello.payload;
    expect(hello.required).toEqual(expect.arrayContaining(['protocol_version', 'boot_id', 'cached', 'finished']));
    expect(hello.properties.cached.items.pattern).toBe('^[0-9a-f]{64}$');
    expect(hello.$schema).toBeUndefined();
  });

  it('documents the params and result of every RPC method', () => {
    for (const method of Object.keys(rpcMethods)) {
      expect(doc.components.schemas[`rpc_${key(method)}_params`], method).toBeDefined();
      expect(doc.components.schemas[`rpc_${key(method)}_result`], method).toBeDefined();
    }
  });

  it('resolves every $ref it contains', () => {
    const refs: string[] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) (k === '$ref' && typeof x === 'string' ? refs.push(x) : walk(x));
      }
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      if (!ref.startsWith('#/')) continue; // schema-internal refs of z.toJSONSchema are relative to their payload
      const target = ref
        .slice(2)
        .split('/')
        .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      expect(target, ref).toBeDefined();
    }
  });
});
