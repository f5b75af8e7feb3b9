print("pushq")
