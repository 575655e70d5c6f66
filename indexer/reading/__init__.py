"""Reading documents: walking folders, reading each file's text (plain, HTML, PDF,
Office, e-book) and its layout, and the rules of what to read."""
