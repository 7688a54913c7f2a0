"""The sentence splitter: candidate boundaries (`candidates`), their features and the shipped
boundary classifier (`model`), the paragraphs it learns from and is measured on
(`paragraphs`), and splitting (`split`). `laser split` over files is `laser.apps.split`."""
