// The spool's on-disk record: one Kafka record (an Avro ingest batch) with what the forwarder
// needs to send it exactly as ingest would have (key, tenancy headers).
//
//   u32 body length | u32 crc32(body) | body:
//   u64 seq | u64 appended-at ms | u32 events | u16+key | u16+tenant_id | u16+environment_id | value
//
// A crash can leave a torn frame at the end of the last segment; it was never fsync'ed, so
// never acknowledged, and the scan stops there.
import { crc32 } from 'node:zlib'

export interface SpoolRecord {
  key: string
  tenantId: string
  environmentId: string
  events: number
  value: Buffer
}

export interface Frame extends SpoolRecord {
  seq: number
  appendedAt: number
}

/** Where a frame's value is in its segment file. */
export interface FramePosition {
  frame: Frame
  valuePos: number
  frameBytes: number
}

const HEAD = 8

/** The frame as [head, value]: the value (the bulk of it) is written as it is, never copied. */
export function encodeFrame(f: Frame): [Buffer, Buffer] {
  const key = Buffer.from(f.key)
  const tenant = Buffer.from(f.tenantId)
  const env = Buffer.from(f.environmentId)
  const headLen = HEAD + 8 + 8 + 4 + 2 + key.length + 2 + tenant.length + 2 + env.length
  const head = Buffer.allocUnsafe(headLen)
  let o = HEAD
  head.writeBigUInt64LE(BigInt(f.seq), o); o += 8
  head.writeBigUInt64LE(BigInt(f.appendedAt), o); o += 8
  head.writeUInt32LE(f.events, o); o += 4
  for (const part of [key, tenant, env]) {
    head.writeUInt16LE(part.length, o); o += 2
    part.copy(head, o); o += part.length
  }
  head.writeUInt32LE(headLen - HEAD + f.value.length, 0)
  head.writeUInt32LE(crc32(f.value, crc32(head.subarray(HEAD))), 4)
  return [head, f.value]
}

/** Header size before the value, to locate the value in the file without decoding. */
export function valueOffset(f: Pick<Frame, 'key' | 'tenantId' | 'environmentId'>): number {
  return HEAD + 8 + 8 + 4 + 6 + Buffer.byteLength(f.key) + Buffer.byteLength(f.tenantId) + Buffer.byteLength(f.environmentId)
}

/** Every intact frame of a segment, in order; stops at the first torn or corrupt one. */
export function scanFrames(file: Buffer): { frames: FramePosition[]; validBytes: number } {
  const frames: FramePosition[] = []
  let pos = 0
  while (pos + HEAD <= file.length) {
    const bodyLen = file.readUInt32LE(pos)
    const end = pos + HEAD + bodyLen
    if (bodyLen < 26 || end > file.length) break
    const body = file.subarray(pos + HEAD, end)
    if (crc32(body) !== file.readUInt32LE(pos + 4)) break
    let o = 0
    const seq = Number(body.readBigUInt64LE(o)); o += 8
    const appendedAt = Number(body.readBigUInt64LE(o)); o += 8
    const events = body.readUInt32LE(o); o += 4
    const strings: string[] = []
    for (let i = 0; i < 3; i++) {
      const n = body.readUInt16LE(o); o += 2
      strings.push(body.toString('utf8', o, o + n)); o += n
    }
    const [key, tenantId, environmentId] = strings
    frames.push({ frame: { seq, appendedAt, events, key, tenantId, environmentId, value: body.subarray(o) }, valuePos: pos + HEAD + o, frameBytes: HEAD + bodyLen })
    pos = end
  }
  return { frames, validBytes: pos }
}
