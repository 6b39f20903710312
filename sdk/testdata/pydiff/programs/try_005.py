try:
    doc("wiki-999999")
except Exception as e:
    print("lookup failed:", e)
print("continuing")
