import json
print(json.dumps({"k": 1}, separators=(",", ":")), json.loads("[1.0, 2]"), json.dumps(0.1), json.dumps([1e-06]))
