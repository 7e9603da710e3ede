//! Errors of the wire's API boundary.

/// Why a frame could not be sent or received.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The stream failed.
    #[error("frame at byte {offset}: i/o failed: {source}")]
    Io {
        /// Byte offset in the stream of the frame being read or written.
        offset: u64,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The stream ended inside a frame.
    #[error("frame at byte {offset}: stream ended after {got} of {needed} bytes")]
    Truncated {
        /// Byte offset of the frame's length prefix.
        offset: u64,
        /// Bytes the frame needed (length prefix, or the length it announced).
        needed: u64,
        /// Bytes that arrived.
        got: u64,
    },
    /// A frame longer than `FRAME_BYTES_MAX` (announced or about to be sent).
    #[error("frame at byte {offset}: {len} bytes, at most {max} allowed")]
    TooLarge {
        /// Byte offset of the frame.
        offset: u64,
        /// Its length (version byte plus payload).
        len: u64,
        /// `FRAME_BYTES_MAX`.
        max: u32,
    },
    /// A frame of length zero has no version byte.
    #[error("frame at byte {offset}: empty frame, no version byte")]
    Empty {
        /// Byte offset of the frame.
        offset: u64,
    },
    /// The version byte is not one this build speaks.
    #[error(
        "frame at byte {offset}: unknown wire version {version}, this build speaks {supported}"
    )]
    UnknownVersion {
        /// Byte offset of the frame.
        offset: u64,
        /// The version byte received.
        version: u8,
        /// `WIRE_VERSION`.
        supported: u8,
    },
    /// The payload does not decode as the expected message type.
    #[error("frame at byte {offset}: payload malformed at payload byte {payload_offset} of {payload_len}: {reason}")]
    Malformed {
        /// Byte offset of the frame.
        offset: u64,
        /// Where in the payload decoding stopped.
        payload_offset: u64,
        /// The payload's length.
        payload_len: u64,
        /// The decoder's message.
        reason: String,
    },
    /// The message could not be encoded.
    #[error("message could not be encoded: {reason}")]
    Encode {
        /// The encoder's message.
        reason: String,
    },
    /// The connection was closed after an earlier error.
    #[error("connection closed after an earlier frame error")]
    Closed,
}
