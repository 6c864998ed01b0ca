# Not Python: loading it must fail with a client error naming the file and line.
class Broken(Rule:
    pass
