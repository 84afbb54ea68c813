import { describe, expect, it } from 'vitest';
import { formatLabels, parseLabelPair } from '../src/labels.ts';

describe('labels as people type and read them', () => {
  it('reads key=value, trimmed; nothing without a key before the =', () => {
    expect(parseLabelPair('site=lab-2')).toEqual(['site', 'lab-2']);
    expect(parseLabelPair(' rack = a ')).toEqual(['rack', 'a']);
    expect(parseLabelPair('note=a=b')).toEqual(['note', 'a=b']);
    expect(parseLabelPair('=x')).toBeUndefined();
    expect(parseLabelPair('no-equals')).toBeUndefined();
  });

  it('writes them sorted by key with the separator asked for', () => {
    expect(formatLabels({ site: 'lab-2', rack: 'a' })).toBe('rack=a, site=lab-2');
    expect(formatLabels({ site: 'lab-2', rack: 'a' }, ',')).toBe('rack=a,site=lab-2');
    expect(formatLabels({})).toBe('');
  });
});
