"""Which model, and what is it? The model stage: its files, the official models and their
downloads, the choice of each side's model, checkpoints, preprocessing and embedding spaces;
each module's first line says which question it answers."""
