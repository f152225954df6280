"""Reports: rich tables of results, for people. (Scripts read the JSON.)"""
