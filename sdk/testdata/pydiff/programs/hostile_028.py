# sandbox: unsupported_feature
import socket
socket.create_connection(("example.com", 80))
