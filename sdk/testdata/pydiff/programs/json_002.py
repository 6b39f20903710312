import json
print(json.dumps({"b": 1, "a": [True, None, 1.5]}, sort_keys=True), json.dumps("Björn"), json.dumps("Björn", ensure_ascii=False))
