// MockAPNs
