//! The frame format, independent of any stream.

use super::FrameError;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// The wire version this build writes and accepts. Version 2: every
/// frame to a node names the partition it is for.
pub const WIRE_VERSION: u8 = 2;

/// Bytes of the big-endian length prefix.
pub const LENGTH_BYTES: usize = 4;

/// The largest frame (version byte plus payload). A recovered tail or a
/// catch-up batch is sent in pieces below this; a peer announcing more is
/// refused before anything is allocated for it.
pub const FRAME_BYTES_MAX: u32 = 4 << 20;

// The length prefix must be able to express every allowed frame.
const _: () = assert!(FRAME_BYTES_MAX as u64 <= u32::MAX as u64);

/// Encode `message` as one whole frame (length prefix included); `offset`
/// is where it will start in the stream, for errors.
pub fn encode_frame<T: Serialize>(message: &T, offset: u64) -> Result<Vec<u8>, FrameError> {
    let mut frame = vec![0; LENGTH_BYTES];
    frame.push(WIRE_VERSION);
    frame = postcard::to_extend(message, frame).map_err(|e| FrameError::Encode {
        reason: e.to_string(),
    })?;
    let len = (frame.len() - LENGTH_BYTES) as u64;
    if len > u64::from(FRAME_BYTES_MAX) {
        return Err(FrameError::TooLarge {
            offset,
            len,
            max: FRAME_BYTES_MAX,
        });
    }
    frame[..LENGTH_BYTES].copy_from_slice(&(len as u32).to_be_bytes());
    Ok(frame)
}

/// Decode the body of one frame (version byte plus payload) that started at
/// stream byte `offset`.
pub fn decode_payload<T: DeserializeOwned>(body: &[u8], offset: u64) -> Result<T, FrameError> {
    let (&version, payload) = body.split_first().ok_or(FrameError::Empty { offset })?;
    if version != WIRE_VERSION {
        return Err(FrameError::UnknownVersion {
            offset,
            version,
            supported: WIRE_VERSION,
        });
    }
    let malformed = |consumed: usize, reason: String| FrameError::Malformed {
        offset,
        payload_offset: consumed as u64,
        payload_len: payload.len() as u64,
        reason,
    };
    let mut de = postcard::Deserializer::from_bytes(payload);
    let decoded = T::deserialize(&mut de);
    let rest = de
        .finalize()
        .expect("invariant broken: a slice deserializer always returns its remainder")
        .len();
    let consumed = payload.len() - rest;
    match decoded {
        Err(e) => Err(malformed(consumed, e.to_string())),
        Ok(_) if rest != 0 => Err(malformed(
            consumed,
            format!("{rest} bytes left after the message"),
        )),
        Ok(message) => Ok(message),
    }
}
