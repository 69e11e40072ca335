print("pushworker")
