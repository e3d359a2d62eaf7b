//! The Bit Select shop (比特严选).
