"""The sentence splitter: candidate boundaries (`candidates`), their features and the shipped
boundary classifier (`model`), splitting (`split`) and its training (`training`)."""
