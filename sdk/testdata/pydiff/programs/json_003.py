import json
obj = json.loads('{"x": [1, 2, {"y": null}], "z": "\\u00e9"}')
print(obj, obj["x"][2]["y"] is None, json.dumps(obj, indent=2))
