print(['a', "b'c", 'd"e', 'tab\tnew\nline'])
