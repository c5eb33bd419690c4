"""A small slice of ``tf.keras.layers``: the Layer base with dtype policies, and Dense."""
from .base_layer import Layer
from .core import Dense
from .convolutional import Conv2D, Conv2DTranspose, Convolution2D
from .pooling import AveragePooling2D, AvgPool2D, MaxPool2D, MaxPooling2D
from .reshaping import Flatten
from .regularization import Dropout
from .normalization import BatchNormalization
from .recurrent import LSTM, Bidirectional, Masking
from .activation import Activation, ReLU, Softmax

__all__ = ["Layer", "Dense", "Conv2D", "Conv2DTranspose", "Convolution2D", "MaxPool2D",
           "MaxPooling2D", "AveragePooling2D", "AvgPool2D", "Flatten", "Dropout",
           "BatchNormalization", "LSTM", "Bidirectional", "Masking", "Activation", "ReLU", "Softmax"]
